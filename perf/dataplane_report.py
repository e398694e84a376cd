#!/usr/bin/env python3
"""Tables and a chart from perf/dataplane_ab.py's JSON files.

    python perf/dataplane_report.py OUT_DIR LABEL=FILE [LABEL=FILE ...]

Each LABEL (e.g. ``jdk17-quiet``) names one in-process file and, optionally, its stock
twin: ``LABEL=inproc.json[,stock.json]``. Writes tables.md in OUT_DIR (per label, rows,
path and variant: wall and CPU seconds, minimum and median, the number of runs, and the
hop's share: 1 - mem/spark of the medians) and OUT_DIR/dataplane.png (median wall of the
10M-row paths per variant, relative to ``spark``).
"""
from __future__ import annotations

import json
import os
import statistics
import sys


def _stats(runs: list[dict]) -> dict:
    w = [r["wall_s"] for r in runs]
    c = [r["cpu_s"] for r in runs]
    return {"wall_min": min(w), "wall_med": statistics.median(w), "cpu_min": min(c),
            "cpu_med": statistics.median(c), "n": len(runs)}


def load(spec: str) -> dict:
    """{rows: {path: {variant: stats}}} of an in-process file and its stock twin."""
    files = spec.split(",")
    out: dict = {}
    for i, path in enumerate(files):
        with open(path) as fh:
            data = json.load(fh)
        for rows, paths in data["data"].items():
            for name, variants in paths.items():
                for v, runs in variants.items():
                    label = "stock" if i == 1 else v
                    out.setdefault(rows, {}).setdefault(name, {})[label] = _stats(runs)
    return out


def table(label: str, data: dict) -> list[str]:
    lines = [f"### {label}", "",
             "| rows | path | variant | wall min | wall median | CPU min | CPU median | runs |"
             " hop share (1 - mem/spark, median wall / CPU) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rows in sorted(data, key=int):
        for name, variants in data[rows].items():
            share = ""
            if "mem" in variants and "spark" in variants:
                s, m = variants["spark"], variants["mem"]
                share = (f"{100 * (1 - m['wall_med'] / s['wall_med']):.0f}% / "
                         f"{100 * (1 - m['cpu_med'] / s['cpu_med']):.0f}%")
            for v in ("stock", "spark", "mem", "py4jni"):
                if v not in variants:
                    continue
                st = variants[v]
                lines.append(f"| {int(rows):,} | {name} | {v} | {st['wall_min']:.3f} | "
                             f"{st['wall_med']:.3f} | {st['cpu_min']:.3f} | {st['cpu_med']:.3f} | "
                             f"{st['n']} | {share if v == 'spark' else ''} |")
    return lines + [""]


def chart(all_data: dict, path: str) -> None:
    """Median wall of every 10M-row path per variant, relative to the in-process socket /
    temp-file path (``spark`` = 1)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    groups = [(label, name) for label, d in all_data.items()
              for name, v in d.get("10000000", {}).items() if "spark" in v]
    variants = ("stock", "spark", "mem", "py4jni")
    colors = {"stock": "#888888", "spark": "#4c72b0", "mem": "#dd8452", "py4jni": "#55a868"}
    fig, ax = plt.subplots(figsize=(max(9, 0.75 * len(groups)), 5))
    width = 0.2
    for j, v in enumerate(variants):
        xs, ys = [], []
        for i, (label, name) in enumerate(groups):
            d = all_data[label]["10000000"][name]
            if v in d:
                xs.append(i + (j - 1.5) * width)
                ys.append(d[v]["wall_med"] / d["spark"]["wall_med"])
        ax.bar(xs, ys, width, label=v, color=colors[v])
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{n} | {lab}" for lab, n in groups], fontsize=7, rotation=40,
                       ha="right")
    ax.set_ylabel("median wall, relative to the in-process socket/temp-file path")
    ax.set_title("PySpark data paths at 10M rows x 2 longs: stock PySpark, in-process with "
                 "Spark's hop (spark), the bytes in memory (mem: A/B, py4jni: as built)",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str]) -> int:
    out_dir, specs = argv[0], argv[1:]
    all_data = {}
    lines: list[str] = []
    for spec in specs:
        label, _, files = spec.partition("=")
        all_data[label] = load(files)
        lines += table(label, all_data[label])
    with open(os.path.join(out_dir, "tables.md"), "w") as fh:
        fh.write("\n".join(lines))
    chart(all_data, os.path.join(out_dir, "dataplane.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
