//! The `moat` binary: see `moat --help`.
fn main() -> std::process::ExitCode {
    moat_broker::main()
}
