"""Renderers: Report -> text on a stream. They never analyse and never call an API."""

# text fits the terminal (long lines wrapped or cut with "…"); wide is the same text, never cut.
FORMATS = ("text", "wide", "json", "yaml")


def render(report, opts, stream) -> None:
    """One report as opts (render/options.py RenderOptions) asks."""
    fmt = opts.format
    if fmt == "json":
        from kubectl_dra.render.structured import to_json_utf8

        binary = getattr(stream, "buffer", None)  # sys.stdout: the UTF-8 bytes as they are, not decoded and re-encoded
        if binary is not None:
            stream.flush()
            binary.write(to_json_utf8(report))
        else:
            stream.write(to_json_utf8(report).decode("utf-8"))
    elif fmt == "yaml":
        from kubectl_dra.render.structured import to_yaml

        stream.write(to_yaml(report))
    else:
        from kubectl_dra.render.text import render_text

        render_text(report, stream, opts)


def render_many(reports: list, opts, stream) -> None:
    """Several reports: text separated by a blank line; JSON/YAML as one `kind: List` of them."""
    fmt = opts.format
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import list_to_json, list_to_yaml

        stream.write(list_to_json(reports) if fmt == "json" else list_to_yaml(reports))
        return
    for i, r in enumerate(reports):
        if i:
            stream.write("\n")
        render(r, opts, stream)
