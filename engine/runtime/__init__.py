"""Services every layer may use while it runs: progress and cancellation, resource files."""
