"""The scenario as data: dataclasses, JSON, overrides, structural validation and its errors.

Everything above this layer reads a `Scenario` (`engine.model.scenario`) and reports what is
wrong with one as `Problem`s in a `ScenarioError` (`engine.model.errors`).
"""
