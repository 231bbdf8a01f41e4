"""Template plugin for tilelang-hostcg, for the made-up "Acme" accelerator.

Copy this distribution to start a backend's plugin (see its README). It shows:

- a host codegen variant of an existing kind (``llvm``) that serves only some
  targets (those whose ``mtriple`` names the vendor ``acme``) and wins over the core's
  ``llvm`` codegen for them through its priority: :mod:`tilelang_hostcg_template.codegen`,
  advertised in the *module* form (the module registers it on import);
- a hook for a device kind (TVM's ``ext_dev``, the kind meant for out-of-tree
  devices): :mod:`tilelang_hostcg_template.hooks`, advertised in the *module:attr* form.

Importing the package itself registers nothing and imports no TVM.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["ACME_VENDOR", "__version__"]

ACME_VENDOR = "acme"
"""The vendor field of the LLVM triples this plugin serves (``x86_64-acme-linux-gnu``)."""
