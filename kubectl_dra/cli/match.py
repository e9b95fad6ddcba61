"""match claim: which devices a claim (named, or in a manifest) would get, and why not the others."""

from __future__ import annotations

import click

from kubectl_dra.cli import complete
from kubectl_dra.cli.common import (
    ALL_DEVICES,
    COLOR,
    CONNECTION,
    CONTEXT_SETTINGS,
    EXIT_ZERO,
    INPUT,
    SEMANTICS,
    VERBOSE,
    HelpGroup,
    finish,
    flags,
    gather_for,
    output_flag,
    scope_flags,
    stdin_once,
)
from kubectl_dra.cli.options import Options
from kubectl_dra.errors import DraError
from kubectl_dra.model.scope import base_namespace


@click.group(
    cls=HelpGroup, context_settings=CONTEXT_SETTINGS, short_help="Which devices a claim would get, and why not"
)
def match():
    """Show which devices would satisfy a claim, and why every other device is rejected."""


@match.command("claim", context_settings=CONTEXT_SETTINGS)
@click.argument("name", required=False, shell_complete=complete.claims)
@click.option(
    "-f",
    "--filename",
    type=click.Path(allow_dash=True),
    default=None,
    help="A ResourceClaim or ResourceClaimTemplate manifest to match instead of a named claim, or a Pod "
    "manifest: the claim kube-scheduler would build from its DRA-backed extended resources (- for stdin)",
)
@flags(
    *scope_flags(
        "Namespace of the claim, and of a -f manifest that names none (default: the kubeconfig context's)",
        "Find the named claim in any namespace",
    ),
    *INPUT,
    *SEMANTICS,
    *output_flag(),
    *ALL_DEVICES,
    click.option(
        "--count",
        type=click.IntRange(1, 10_000),
        default=None,
        help="Would N copies of the claim get devices, one after another (after the pods waiting)? How many fit, "
        "where, and why the first that does not",
    ),
    *EXIT_ZERO,
    *CONNECTION,
    *COLOR,
    *VERBOSE,
)
def match_claim_cmd(name, filename, count, **params):
    """Show which devices would satisfy claim NAME (or the claim in -f FILE) now.

    \b
    Examples:
      # Before applying a claim: which devices would it get?
      kubectl dra match claim -f claim.yaml
      # Every device with its reason
      kubectl dra match claim my-claim --all-devices
      # Where would a pod's nvidia.com/gpu: 1 (a DRA-backed extended resource) go?
      kubectl dra match claim -f pod.yaml
      # How many more 1g.10gb partitions fit? Ask for 20 and read how many do
      kubectl dra match claim -f mig-1g.yaml --count 20
    """
    o = Options.from_click(params)
    if bool(name) == bool(filename):
        raise DraError("give either a claim NAME or -f FILE")
    stdin_once([filename] if filename else [], o.from_files)
    claim = manifest_claim(filename, o.namespace) if filename else None  # a bad file fails before any API call
    # --count: the copies queue after the pods waiting (in any namespace), whose own answers read the nodes' pods
    queue = count is not None
    got = gather_for(o, claim_name=name, pending_pods=queue, bound_pods=queue)
    snap, ns = got.snapshot, got.namespace
    if filename and ns != base_namespace(o.namespace, None):
        claim = manifest_claim(filename, ns)  # a manifest without a namespace is in the command's (model/scope.py)
    from kubectl_dra.analyze.reports.claim import match_claim
    from kubectl_dra.analyze.reports.targets import claim_to_match

    sem = o.semantics(snap.server_version)
    claim = claim_to_match(snap, sem, ns, name, claim, filename)
    if count is not None:
        from kubectl_dra.analyze.reports.replicas import match_count

        return finish(match_count(snap, sem, claim, count), o)
    return finish(match_claim(snap, sem, claim), o)


def manifest_claim(filename: str, namespace: str | None) -> dict:
    """The one ResourceClaim, ResourceClaimTemplate or Pod of match's -f file."""
    from kubectl_dra.gather.files import load_files

    own = load_files([filename], namespace, judged=False)
    found = list(own.claims) + list(own.templates)
    if not found and len(own.pods) == 1:
        found = list(own.pods)  # its DRA-backed extended resources, as the claim the scheduler would build
    if len(found) != 1:
        raise DraError(
            f"{filename}: expected exactly one ResourceClaim or ResourceClaimTemplate (or a Pod with "
            f"DRA-backed extended resources), found {len(found)}"
        )
    return found[0]
