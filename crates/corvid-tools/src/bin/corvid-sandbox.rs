//! The sandbox helper as a program of its own, for corvid-tools' tests (the `corvid` binary
//! offers the same entry point as its hidden `sandbox-exec` subcommand).

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1).peekable();
    if args
        .peek()
        .is_some_and(|first| first == corvid_tools::sandbox::HELPER_SUBCOMMAND)
    {
        args.next();
    }
    corvid_tools::sandbox::helper_main(args)
}
