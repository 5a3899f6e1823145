"""Engine work off the GUI thread: one generic worker (`ui.work.tasks.TaskWorker`) and the
evaluation and latency-curve workers built on it."""
