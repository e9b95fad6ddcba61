"""Command line: flags -> Options (options.py) -> gather -> analyse -> render. The only layer that knows about click.

This module is the group, its registrations and main()'s error ladder; common.py the flags and emitters every
command shares; one module per command (explain, status, devices, dump, lint, match) and watch.py the -w loops."""

from __future__ import annotations

import gc
import os
import sys

import click

from kubectl_dra import __version__
from kubectl_dra.cli import devices, dump, explain, lint, match, report, status
from kubectl_dra.cli.common import CONTEXT_SETTINGS, HelpGroup, ReaderGone, flags, one_line, output_flag
from kubectl_dra.errors import DraError, ExitCode
from kubectl_dra.features import SUPPORTED_VERSIONS


def prog_name(argv0: str | None = None) -> str:
    """`kubectl dra` when run as a kubectl plugin (kubectl-dra, or krew's kubectl-dra / kubectl_dra link)."""
    base = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "kubectl-dra"))
    if base.endswith(".exe"):
        base = base[:-4]
    for prefix in ("kubectl-", "kubectl_"):
        if base.startswith(prefix):
            return "kubectl " + base[len(prefix) :].replace("_", "-")
    return "kubectl dra"


@click.group(cls=HelpGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="kubectl-dra", message="%(prog)s %(version)s")
def cli():
    """Dynamic Resource Allocation (DRA), explained: why a pod's claims can or cannot get their devices (explain,
    status, match), what is free and who holds it (devices), what is wrong in manifests (lint), and a bundle that
    replays the answers offline (dump).

    \b
    Exit codes: 0 nothing blocks, 1 blocked / not satisfiable,
    2 the tool could not do its job.
    """


@cli.result_callback()
def _exit_with(code) -> None:
    """The one place a command's ExitCode (common.finish) becomes the process's: 0 returns, as a command that
    returns nothing does; 1 and 2 exit."""
    if code:
        raise SystemExit(int(code))


for command in (
    explain.explain,
    status.status_cmd,
    devices.devices_cmd,
    dump.dump_cmd,
    report.report_cmd,
    lint.lint_cmd,
    match.match,
):
    cli.add_command(command)


@cli.command(context_settings=CONTEXT_SETTINGS)
@flags(*output_flag(("text", "json", "yaml")))
def version(output):
    """Print the kubectl-dra version."""
    info = {
        "kubectlDra": __version__,
        "python": sys.version.split()[0],
        "supportedKubernetes": [f"{a}.{b}" for a, b in SUPPORTED_VERSIONS],
    }
    if output == "json":
        import json

        click.echo(json.dumps(info, indent=2))
    elif output == "yaml":
        from kubectl_dra.render.structured import data_to

        click.echo(data_to(info, "yaml"), nl=False)
    else:
        click.echo(f"kubectl-dra {__version__}")


@cli.command(context_settings=CONTEXT_SETTINGS, short_help="Shell completion (--help: kubectl dra <TAB> too)")
@click.argument("shell", type=click.Choice(("bash", "zsh", "fish")))
def completion(shell):
    """Print the shell completion script of the kubectl-dra command (kubectl-dra <TAB>).

    kubectl dra <TAB> is completed by kubectl itself (1.26 or newer, with its own completion set up), which asks the
    program kubectl_complete-dra on PATH. The krew archive ships it next to the executable; pipx and pip do not
    install it: a clone of the repository has it as packaging/kubectl_complete-dra. docs/install.md has the details.

    \b
    Examples:
      # kubectl dra <TAB>, installed from the clone with pipx or pip (run in the clone)
      install -m 755 packaging/kubectl_complete-dra ~/.local/bin/
      # kubectl dra <TAB>, installed with krew
      ln -sf "$(dirname "$(readlink -f "$(command -v kubectl-dra)")")/kubectl_complete-dra" ~/.local/bin/
      # kubectl-dra <TAB> in bash, in this shell
      source <(kubectl-dra completion bash)
      # kubectl-dra <TAB> in zsh, permanently
      kubectl-dra completion zsh > "${fpath[1]}/_kubectl-dra"
    """
    from click.shell_completion import get_completion_class

    comp_cls = get_completion_class(shell)
    comp = comp_cls(cli, {}, "kubectl-dra", "_KUBECTL_DRA_COMPLETE")
    click.echo(comp.source())


def main(argv=None) -> None:
    """Console-script entry point: every failure becomes one `error: ...` line and an exit code. Run as a process
    (argv None), it ends without freeing its objects one by one (a third of a second on 40,000 devices): output
    flushed and exit handlers run, then os._exit."""
    try:
        _main(argv)
    except SystemExit as e:
        if argv is None and isinstance(e.code, int):
            _fast_exit(e.code)
        raise


def _killed_by_sigpipe() -> None:
    """End as kubectl ends when its reader goes away: killed by SIGPIPE (the interpreter ignores the signal so that
    a socket's broken pipe is an error; stdout's is put back to the default and raised), nothing on stderr."""
    import signal

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is still buffered goes nowhere
    except (OSError, ValueError):
        pass
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(int(ExitCode.READER_GONE))  # (only if the signal did not end the process)


def _fast_exit(code: int) -> None:
    import atexit

    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away before the last of the output
        code = int(ExitCode.READER_GONE)
    except ValueError:  # the stream is closed
        pass
    except OSError as e:  # what is left of the output cannot be written (a full disk): not a success
        sys.stderr.write(f"error: could not write the output: {one_line(e.strerror or e)}\n")
        code = code or int(ExitCode.ERROR)
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    atexit._run_exitfuncs()
    if code == ExitCode.READER_GONE:
        _killed_by_sigpipe()
    os._exit(code)


def _main(argv=None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    # A short-lived process that builds hundreds of thousands of small dicts from the API objects and
    # makes few reference cycles: the cyclic collector cost ~40% of an explain on 40,000 devices (-w turns it
    # back on after its first answer: kubectl_dra/runtime.py).
    gc.disable()
    verbose = "-v" in args or "--verbose" in args or bool(os.environ.get("KUBECTL_DRA_DEBUG"))
    try:
        cli.main(args=args, prog_name=prog_name(), complete_var="_KUBECTL_DRA_COMPLETE", standalone_mode=False)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        sys.exit(code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("error: interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))
    except click.UsageError as e:
        cmd = e.ctx.command_path if e.ctx else prog_name()
        sys.stderr.write(f"error: {one_line(e.format_message())} (see '{cmd} --help')\n")
        sys.exit(int(ExitCode.ERROR))
    except click.ClickException as e:
        sys.stderr.write(f"error: {one_line(e.format_message())}\n")
        sys.exit(int(ExitCode.ERROR))
    except DraError as e:
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: {one_line(e.message)}\n")
        sys.exit(int(ExitCode.ERROR))
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        sys.exit(int(ExitCode.INTERRUPTED))
    except (ReaderGone, BrokenPipeError):  # (a write outside a command: --help, --version)
        sys.exit(int(ExitCode.READER_GONE))
    except OSError as e:
        # Reading files, kubeconfigs and the API all end in DraError; an OSError that gets here is the output
        # itself failing (a full disk, an I/O error on the file stdout goes to).
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: could not write the output: {one_line(e.strerror or e)}\n")
        sys.exit(int(ExitCode.ERROR))
    except Exception as e:  # a bug: one line, traceback with -v
        if verbose:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: internal error: {type(e).__name__}: {one_line(e)} (run with -v for a traceback)\n")
        sys.exit(int(ExitCode.ERROR))
    sys.exit(int(ExitCode.OK))
