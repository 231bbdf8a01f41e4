"""The registry: the registration table, lazy sources and their loading, failures as records,
the one resolution rule, and the build that asks it. Imports the layers below it
(:mod:`..core`, :mod:`..environment`, :mod:`..discovery`), never a client or the command line."""
