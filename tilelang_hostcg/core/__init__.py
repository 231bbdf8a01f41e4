"""The bottom layer: the names everyone agrees on, the public value types, and every error and
warning of the package. Imports nothing else of the package."""
