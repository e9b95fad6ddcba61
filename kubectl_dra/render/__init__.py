"""Renderers: Report -> text on a stream. They never analyse and never call an API."""

# text fits the terminal (long lines wrapped or cut with "…"); wide is the same text, never cut.
FORMATS = ("text", "wide", "json", "yaml")


def render(report, fmt: str, stream, color: bool = False, width: int | None = None, all_devices: bool = False) -> None:
    if fmt == "json":
        from kubectl_dra.render.structured import to_json

        stream.write(to_json(report))
    elif fmt == "yaml":
        from kubectl_dra.render.structured import to_yaml

        stream.write(to_yaml(report))
    else:
        from kubectl_dra.render.text import render_text

        render_text(report, stream, color=color, width=None if fmt == "wide" else width, all_devices=all_devices)
