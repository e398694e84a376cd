"""Sphinx configuration of py4jni's documentation (Markdown pages, read by MyST).

tests/run_all.sh builds it with warnings as errors (``-W -n``): a link to a page, a
heading anchor or a local file that does not exist fails the build.
"""
from __future__ import annotations

project = "py4jni"
author = "the py4jni authors"
copyright = "the py4jni authors, BSD-3-Clause"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# "## Threads" can be linked as guide.md#threads (GitHub's slugs, for ## and ### headings).
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
html_theme = "alabaster"
html_theme_options = {"description": "py4j's API, the JVM in the Python process",
                      "fixed_sidebar": True}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
html_show_sourcelink = False
