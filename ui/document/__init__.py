"""The open scenario and its undo history: `ui.document.document.ScenarioDocument` and the
undo commands it pushes (`ui.document.commands`)."""
