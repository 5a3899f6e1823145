"""The Links tab: link utilization per tier pair as a histogram, beside the hottest links.

The histogram draws the engine's bin counts (``permutation.utilization_histogram``): for
each utilization bin, one bar per tier pair (server->leaf, leaf->spine, ...) in the tier's
colour, named in the legend. Clicking a row of the hottest-links table emits
`bundleActivated(bundle_id)` so the window selects the link's bundle on the canvas.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QSplitter

from engine.analysis import PermutationResult, UtilizationHistogram
from ui.results.plot_axes import result_plot
from ui.results.plot_export import ExportTarget, csv_number, write_csv
from ui.results.result_tab import ResultTab
from ui.results.tables import fill_table, make_table, table_header, table_rows

TIER_COLORS = ("#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#9467bd")
BAR_FILL = 0.8  # share of a bin's width the bars of all tiers take together


class LinksTab(ResultTab):
    """Utilization histogram per tier pair and the hottest-links table."""

    bundleActivated = Signal(str)

    def __init__(self) -> None:
        self.histogram_plot = result_plot(
            "utilizationHistogram",
            "link utilization (% of capacity)",
            "links",
            log_x=False,
            log_y=False,
        )
        self.histogram_plot.setTitle("Link utilization per tier, permutation traffic")
        legend = self.histogram_plot.getPlotItem().legend
        legend.setColumnCount(4)  # a short, wide legend over the empty middle of the plot
        legend.anchor(itemPos=(0.5, 0), parentPos=(0.5, 0), offset=(0, 10))
        self.table = make_table("linksTable", ["link", "bundle", "utilization"])
        self.table.setWordWrap(False)
        self.table.cellClicked.connect(self._row_clicked)
        body = QSplitter(Qt.Orientation.Horizontal)
        body.setObjectName("linksSplitter")
        body.addWidget(self.histogram_plot)
        body.addWidget(self.table)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        body.setSizes([600, 400])
        super().__init__("linksTab", body)
        self.bars: dict[str, pg.BarGraphItem] = {}
        self.tier_colors: dict[str, str] = {}
        self.histogram: UtilizationHistogram | None = None
        self.set_exports(
            [
                ExportTarget(
                    "utilization histogram",
                    "utilization_histogram",
                    self.export_histogram_csv,
                    self.histogram_plot,
                ),
                ExportTarget("hottest links table", "hottest_links", self.export_table_csv),
            ]
        )

    def show_permutation(self, perm: PermutationResult) -> None:
        """Fill the histogram and the hottest-links table from a permutation test."""
        self.show_histogram(perm.utilization_histogram)
        links = perm.hottest_links
        fill_table(self.table, [[h.link, h.bundle, f"{h.utilization:.1%}"] for h in links])
        self.set_info(
            f"{len(links)} hottest link(s) of the permutation test; click one to select it"
            if links
            else "No loaded links"
        )

    def show_histogram(self, histogram: UtilizationHistogram | None) -> None:
        """One bar per tier pair in each bin; tiers absent from `histogram` are removed."""
        self.histogram = histogram
        tiers = histogram.tiers if histogram is not None else {}
        for label in [label for label in self.bars if label not in tiers]:
            self.histogram_plot.removeItem(self.bars.pop(label))
        if histogram is None or not tiers:
            return
        edges_pct = [100.0 * e for e in histogram.edges]
        bin_width = edges_pct[1] - edges_pct[0]
        bar_width = bin_width * BAR_FILL / len(tiers)
        margin = bin_width * (1 - BAR_FILL) / 2
        for k, (label, counts) in enumerate(tiers.items()):
            centres = [lo + margin + (k + 0.5) * bar_width for lo in edges_pct[:-1]]
            bar = self.bars.get(label)
            if bar is None:
                color = self.tier_colors.setdefault(
                    label, TIER_COLORS[len(self.tier_colors) % len(TIER_COLORS)]
                )
                bar = pg.BarGraphItem(
                    x=centres,
                    height=list(counts),
                    width=bar_width,
                    brush=color,
                    pen=None,
                    name=label,
                )
                self.histogram_plot.addItem(bar)
                self.bars[label] = bar
            else:
                bar.setOpts(x=centres, height=list(counts), width=bar_width)
        self.histogram_plot.setXRange(edges_pct[0], edges_pct[-1], padding=0.02)

    def _row_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 1)
        link = self.table.item(row, 0)
        self.set_info(f"Selected {link.text() if link else ''}")
        self.bundleActivated.emit(item.text() if item else "")

    def export_histogram_csv(self, path: str) -> None:
        """Bin edges (% of capacity) and the number of links of each tier pair per bin."""
        histogram = self.histogram or UtilizationHistogram(edges=(), tiers={})
        edges, tiers = histogram.edges, histogram.tiers
        header = [
            "utilization from (%)",
            "utilization to (%)",
            *(f"{label} links" for label in tiers),
        ]
        rows = [
            [
                csv_number(round(100.0 * edges[i], 9)),
                csv_number(round(100.0 * edges[i + 1], 9)),
                *(counts[i] for counts in tiers.values()),
            ]
            for i in range(len(edges) - 1)
        ]
        write_csv(path, header, rows)

    def export_table_csv(self, path: str) -> None:
        """The hottest links table as shown."""
        write_csv(path, table_header(self.table), table_rows(self.table))
