//! napi-rs's link setup (on macOS, Node-API's functions resolve when Node
//! loads the module: `-undefined dynamic_lookup`). On macOS the module
//! also gets an install name of its own: by default the linker records the
//! path it wrote the file to, a path of the build machine, which the
//! release checks refuse (release/binaries.sh, check_paths).

fn main() {
    napi_build::setup();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/shardring.node");
    }
}
