"""The shipped type stubs match the compiled module (mypy.stubtest)."""

import pathlib
import subprocess
import sys

import shardring


def test_stubs_match_the_extension():
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "shardring"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_stubs_and_py_typed():
    package = pathlib.Path(shardring.__file__).parent
    assert (package / "py.typed").exists()
    assert (package / "_shardring.pyi").exists()
