"""One version everywhere: `[workspace.package] version` in Cargo.toml is the
source, and every file that writes a version by hand or by generator must
agree with it. Exits 1 listing each disagreement. Run by `make
check-versions` (part of `make test`); RELEASING.md says how to bump.

Checked: the workspace's path dependencies (`shardring`,
`shardring-membership`), node/package.json, each npm/<platform>/package.json,
the version napi-rs wrote into node/index.js, the RING_VERSION_* macros of
include/ring.h, py/pyproject.toml taking its version from Cargo (dynamic),
and, when built, `shardring --version`. Also that release/platforms.json and
the npm/<platform>/ packages name the same platforms alike, and that
README.md's install table names each platform's files as dist writes them.
"""

import json
import pathlib
import re
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> int:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    version = cargo["workspace"]["package"]["version"]
    found: list[tuple[str, str]] = []

    for name, dependency in cargo["workspace"]["dependencies"].items():
        if "path" in dependency:
            found.append((f"Cargo.toml [workspace.dependencies] {name}", dependency.get("version", "(none)")))
    found.append(("node/package.json", json.loads((ROOT / "node/package.json").read_text())["version"]))
    for package in sorted((ROOT / "npm").glob("*/package.json")):
        found.append((str(package.relative_to(ROOT)), json.loads(package.read_text())["version"]))
    for expected in sorted(set(re.findall(r"expected (\S+) but got", (ROOT / "node/index.js").read_text()))):
        found.append(("node/index.js (napi-rs's version check)", expected))
    header = (ROOT / "include/ring.h").read_text()
    macros = [re.search(rf"#define RING_VERSION_{part} (\d+)", header) for part in ("MAJOR", "MINOR", "PATCH")]
    found.append(("include/ring.h RING_VERSION_*", ".".join(m.group(1) if m else "?" for m in macros)))
    pyproject = tomllib.loads((ROOT / "py/pyproject.toml").read_text())
    found.append(
        ("py/pyproject.toml", version if "version" in pyproject["project"].get("dynamic", []) else "not dynamic")
    )
    cli = ROOT / "target/release/shardring"
    if cli.exists():
        output = subprocess.run([str(cli), "--version"], capture_output=True, text=True, check=True).stdout
        found.append(("shardring --version", output.split()[-1]))

    wrong = [(where, got) for where, got in found if got != version]
    for where, got in wrong:
        print(f"version check: {where} says {got}, Cargo.toml says {version}")
    mismatched = platform_packages() + install_table(version)
    for problem in mismatched:
        print(f"platform check: {problem}")
    if wrong or mismatched:
        return 1
    print(f"version check: {len(found)} places agree on {version}")
    return 0


# Node's names of the CPU a release/platforms.json Rust target runs on.
NODE_CPU = {"x86_64": "x64", "aarch64": "arm64"}


def platform_packages() -> list[str]:
    """release/platforms.json and npm/<platform>/ name the same platforms,
    and each package.json names its platform, CPU, OS and C library."""
    listed = json.loads((ROOT / "release/platforms.json").read_text())["platforms"]
    problems = []
    names = {p["npm"] for p in listed if p["node"]}
    for extra in sorted({d.name for d in (ROOT / "npm").iterdir() if d.is_dir()} - names):
        problems.append(f"npm/{extra}/ is not a platform release/platforms.json ships Node for")
    for platform in listed:
        if not platform["node"]:
            continue
        path = ROOT / "npm" / platform["npm"] / "package.json"
        if not path.exists():
            problems.append(f"release/platforms.json lists {platform['npm']}, but {path.relative_to(ROOT)} is missing")
            continue
        package = json.loads(path.read_text())
        # <arch>-<vendor>-<os>[-<abi>]: only Linux names a C library.
        arch, _, system, *abi = platform["rust"].split("-")
        want = {
            "name": f"shardring-{platform['npm']}",
            "main": f"shardring.{platform['npm']}.node",
            "cpu": [NODE_CPU.get(arch, arch)],
            "os": [{"windows": "win32"}.get(system, system)],
        }
        if system == "linux":
            want["libc"] = ["glibc" if abi == ["gnu"] else abi[0] if abi else "?"]
        for field, value in want.items():
            if package.get(field) != value:
                problems.append(f"{path.relative_to(ROOT)}: {field} is {package.get(field)!r}, not {value!r}")
    return problems



def wheel_platform(platform: dict) -> str:
    """The platform part of a wheel's file name as maturin writes it: a
    manylinux2014 wheel carries both of its names (PEP 599 and PEP 600)."""
    if platform["policy"] == "manylinux2014":
        return f"manylinux2014_{platform['rust'].split('-')[0]}.{platform['wheel']}"
    return platform["wheel"]


def install_files(platform: dict, version: str) -> tuple[str, ...]:
    """The file names of a platform's wheel, npm binary package (none for
    a platform without Node) and libring tarball."""
    node = (f"shardring-{platform['npm']}-{version}.tgz",) if platform["node"] else ()
    return (
        f"shardring-{version}-cp310-abi3-{wheel_platform(platform)}.whl",
        *node,
        f"libring-{version}-{platform['archive']}.tar.gz",
    )


def install_table(version: str) -> list[str]:
    """README.md's table of install files names each platform's wheel, npm
    binary package and libring tarball as release/dist.sh writes them."""
    readme = (ROOT / "README.md").read_text()
    problems = []
    for platform in json.loads((ROOT / "release/platforms.json").read_text())["platforms"]:
        files = install_files(platform, version)
        if not any(all(f"`{name}`" in line for name in files) for line in readme.splitlines()):
            problems.append(f"README.md has no install-table row naming {', '.join(files)}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
