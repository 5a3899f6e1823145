"""FabricLab's desktop front end: PySide6 widgets over `engine.analysis` (no computation here).

The window and its panels live at this level; the canvas, the results tabs, the library
features, the open document and the off-thread workers each have a sub-package.
"""
