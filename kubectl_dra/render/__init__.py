"""Renderers: Report -> text on a stream. They never analyse and never call an API."""

# text fits the terminal (long lines wrapped or cut with "…"); wide is the same text, never cut.
FORMATS = ("text", "wide", "json", "yaml")


def render(
    report,
    fmt: str,
    stream,
    color: bool = False,
    width: int | None = None,
    all_devices: bool = False,
    ascii_marks: bool = False,
) -> None:
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

        render_text(
            report,
            stream,
            color=color,
            width=None if fmt == "wide" else width,
            all_devices=all_devices,
            ascii_marks=ascii_marks,
            wide=fmt == "wide",
        )


def render_many(
    reports: list,
    fmt: str,
    stream,
    color: bool = False,
    width: int | None = None,
    all_devices: bool = False,
    ascii_marks: bool = False,
) -> None:
    """Several reports: text separated by a blank line; JSON/YAML as one `kind: List` of them."""
    if fmt in ("json", "yaml"):
        from kubectl_dra.render.structured import list_to_json, list_to_yaml

        stream.write(list_to_json(reports) if fmt == "json" else list_to_yaml(reports))
        return
    for i, r in enumerate(reports):
        if i:
            stream.write("\n")
        render(r, fmt, stream, color=color, width=width, all_devices=all_devices, ascii_marks=ascii_marks)
