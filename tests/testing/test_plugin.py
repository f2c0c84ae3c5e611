"""The pytest plugin as an agent author uses it: fixtures from the entry point, a tree to assert on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parent.parent.parent / "README.md"


def readme_test_file() -> str:
    """The README's pytest example, as written."""
    match = re.search(r"<!-- example:pytest -->\s*```python\n(.*?)```", README.read_text(), re.S)
    assert match is not None, "README lost its pytest example"
    return match.group(1)


AUTHOR_TEST = (
    readme_test_file()
    + """

def test_fixtures_are_fresh_per_test(span_exporter, tracer_provider):
    assert span_exporter.spans() == []
    tracer_provider.get_tracer("t").start_span("one").end()
    assert [s.name for s in span_exporter.spans()] == ["one"]
"""
)


@pytest.mark.slow
def test_plugin_serves_agent_authors(pytester: pytest.Pytester) -> None:
    """The README's example, in a fresh directory outside the repository (pytester's), as its own pytest run."""
    assert not str(pytester.path).startswith(str(README.parent))
    pytester.makepyfile(test_author=AUTHOR_TEST)
    pytester.makeini("[pytest]\nasyncio_mode = auto\n")
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
