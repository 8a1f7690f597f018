"""The by-hand benchmarks: ``python -m benchmarks`` lists them, ``python -m benchmarks NAME
[ARGS...]`` runs one (the same as ``python benchmarks/NAME.py [ARGS...]``).

Their latest tables, with the commands that made them, are in ``benchmarks/RESULTS.md``;
the history is in git (``git log -p benchmarks/RESULTS.md``).
"""
