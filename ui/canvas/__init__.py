"""The fabric canvas: tier layout, the node and edge items, utilization colours, the view and
its editing gestures (`ui.canvas.view.FabricCanvas` is the widget the window shows)."""
