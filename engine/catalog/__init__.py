"""The device catalog and the model presets, every figure with its public source.

The bottom layer of the engine: it reads `resources/catalog.json` and knows nothing of
scenarios, so every other layer may consult it.
"""
