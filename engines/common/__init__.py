"""Generic machinery every game shares: RNG, EMD, k-means, torch weights as arrays."""
