"""The results dock: the summary and pins above the Collective, Links, Training, Cost and Sweep
tabs, with the plot, table and export helpers they share (`ui.results.panel.ResultsPanel`)."""
