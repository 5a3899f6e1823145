"""The headless command line: argument parsing, sub-commands and text/JSON/CSV output.

A front end like `ui`: it reads scenarios and asks `engine.analysis` for every figure.
"""
