"""The games' pure computation: `common` (RNG, EMD, k-means, torch weights as arrays) and one
package per game (`poker`, `nlhe`, `hearts`, `blokus`).

No file I/O beyond reading shipped game definitions, no Prefect, no Dask.
"""
