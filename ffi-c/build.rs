//! With the `header` feature, regenerates `include/ring.h` with cbindgen.
//! Without it (the default), the build does nothing and needs no cbindgen.

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    #[cfg(feature = "header")]
    generate_header();
}

#[cfg(feature = "header")]
fn generate_header() {
    let crate_dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("ffi-c/cbindgen.toml is valid");
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write_to_file(crate_dir.join("../include/ring.h"));
}
