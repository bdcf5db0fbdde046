//! Gives `libring.so` its SONAME (`libring.dylib` its install name), and
//! with the `header` feature regenerates `include/ring.h` with cbindgen
//! (the default build needs no cbindgen).
//!
//! The SONAME names the ABI: `libring.so.MAJOR` from 1.0 on, and
//! `libring.so.0.MINOR` while the version is 0.y.z, where a minor release
//! may break the ABI (Cargo's semver rule; cargo-c names 0.y libraries the
//! same way). The Makefile's `SONAME` follows the same rule. On macOS the
//! install name, which a program records as the SONAME, is
//! `@rpath/libring.0.MINOR.dylib` (`@rpath/libring.MAJOR.dylib` from 1.0),
//! with the crate version as its current and compatibility versions.

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // ELF platforms; Windows (DLLs) has no SONAME.
    match target_os.as_str() {
        "macos" => {
            let (major, minor, patch) = version();
            let abi = if major == 0 { format!("0.{minor}") } else { major.to_string() };
            for (option, value) in [
                ("-install_name", format!("@rpath/libring.{abi}.dylib")),
                ("-current_version", format!("{major}.{minor}.{patch}")),
                ("-compatibility_version", format!("{abi}.0")),
            ] {
                println!("cargo:rustc-cdylib-link-arg=-Wl,{option},{value}");
            }
        }
        "windows" => {}
        _ => println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{}", soname()),
    }
    #[cfg(feature = "header")]
    generate_header();
}

/// The crate version's (major, minor, patch), as Cargo passes it to build scripts.
fn version() -> (u64, u64, u64) {
    let part = |name: &str| -> u64 {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name} is a number"))
    };
    (part("CARGO_PKG_VERSION_MAJOR"), part("CARGO_PKG_VERSION_MINOR"), part("CARGO_PKG_VERSION_PATCH"))
}

/// `libring.so.MAJOR`, or `libring.so.0.MINOR` before 1.0.
fn soname() -> String {
    match version() {
        (0, minor, _) => format!("libring.so.0.{minor}"),
        (major, _, _) => format!("libring.so.{major}"),
    }
}

#[cfg(feature = "header")]
fn generate_header() {
    let crate_dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("ffi-c/cbindgen.toml is valid");
    // The version macros come from the crate version, so a version bump makes
    // the committed header stale (`make check-generated`) until regenerated.
    let (major, minor, patch) = version();
    let macros = format!(
        "\n/**\n \
         * The version of this header, {major}.{minor}.{patch}; `ring_version()` gives the library's.\n \
         * The library's SONAME is {soname}.\n \
         */\n\
         #define RING_VERSION_MAJOR {major}\n\
         #define RING_VERSION_MINOR {minor}\n\
         #define RING_VERSION_PATCH {patch}",
        soname = soname(),
    );
    config.after_includes = Some(match config.after_includes.take() {
        Some(existing) => format!("{existing}\n{macros}"),
        None => macros,
    });
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write_to_file(crate_dir.join("../include/ring.h"));
}
