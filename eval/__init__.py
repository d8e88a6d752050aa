"""graphmem's quality evaluation on real data (Metacademy, Bridge, KdConv).

`python -m eval.run_all [--quick]` runs every protocol and writes
eval/results/quality.json and eval/results/QUALITY.md. The data is read at run
time from ../shared/data (or $GRAPHMEM_SHARED_DATA) and never copied here.
"""
