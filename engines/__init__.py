"""Pure computation: cards, evaluator, isomorphism, hand strength, game definitions.

No file I/O beyond reading shipped game definitions, no Prefect, no Dask.
"""
