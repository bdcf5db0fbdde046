//! napi-rs's link setup. On macOS the module also gets an install name of
//! its own: by default the linker records the path it wrote the file to, a
//! path of the build machine, which the release checks refuse
//! (release/binaries.sh, check_paths). (On Windows with the GNU toolchain
//! napi-build wants a libnode.dll on LIBNODE_PATH; the Makefile's
//! build-target gives it an empty one: see node/Cargo.toml.)

fn main() {
    napi_build::setup();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/shardring.node");
    }
}
