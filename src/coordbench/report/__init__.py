"""The assessment report: one self-contained HTML file per assessment, and a page comparing teams."""

from coordbench.report.html import render_comparison, render_report
from coordbench.report.svg import agent_graph_svg, waterfall_svg

__all__ = ["agent_graph_svg", "render_comparison", "render_report", "waterfall_svg"]
