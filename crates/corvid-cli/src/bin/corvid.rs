//! The `corvid` program; everything it does lives in the library (see `corvid_cli::main`).

fn main() -> std::process::ExitCode {
    corvid_cli::main()
}
