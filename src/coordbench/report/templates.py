"""The report's one escaping point: Jinja2 templates with autoescaping on, and nothing else writes markup.

Every string that reaches a report (agent, service and scenario names, the task, answers,
messages, errors, attribute values, URLs) is a value handed to a template, which escapes it;
no Python code in :mod:`coordbench.report` builds HTML or SVG text itself. A value can only be
inserted unescaped by marking it ``Markup``, and the only ``Markup`` values are other templates'
output (the SVG pictures), so a participant's text is inert wherever it is shown.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

__all__ = ["render"]

_ENV = Environment(
    loader=PackageLoader("coordbench.report", "templates"),
    autoescape=True,  # every template, whatever its file name: .svg.j2 is markup too
    undefined=StrictUndefined,  # a misspelt field is an error, never an empty cell
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters["pyrepr"] = repr  # the exact value of a float, for data-value attributes
_ENV.filters["pathpart"] = lambda value: quote(str(value), safe="")  # a name as one URL path segment ("/" too)


def render(name: str, **context: Any) -> Markup:
    """Render the template ``name`` (under ``report/templates``) with ``context``, escaping every value."""
    return Markup(_ENV.get_template(name).render(**context))  # noqa: S704 - the template escaped every value
