"""A memory body as HTML, safely: the only module that imports markdown-it-py.

Memory files may be hostile (a repository is not trusted), so raw HTML in a body is escaped,
never passed through (`html: False`); link targets are validated by markdown-it (no
`javascript:`, `vbscript:`, `file:` or non-image `data:` URLs); images become plain links, so
opening a memory never makes the browser fetch anything (the page's CSP forbids it too)."""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict


def _link_open(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    idx: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer nofollow")
    token.attrSet("target", "_blank")
    return renderer.renderToken(tokens, idx, options, env)


def _image(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    idx: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    escaped = src.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    label = alt.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        f'<a href="{escaped}" rel="noopener noreferrer nofollow" target="_blank">'
        f"[image: {label}]</a>"
    )


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """HTML for a memory body (escaped, no raw HTML, no remote fetches)."""
    html: str = _MD.render(text)
    return html
