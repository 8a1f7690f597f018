"""Connected components of the class-bucket graph, on the cluster: a union-find per
partition of classes, merged pairwise across partitions.

A class links the buckets it sits in (one per release it is in); two classes are in one
component when a chain of shared buckets joins them. Each partition reduces its classes
to pairs (bucket, root: the smallest bucket of its local piece) with
:func:`local_roots`; :func:`merge_roots` joins two such lists (a union-find over their
pairs); a binary tree of merges on the workers ends in the label of every bucket, an
array of the buckets' count (:func:`component_labels`), which stays on the cluster.

>>> b = np.array([[0, 5], [1, 5], [2, -1]])      # three classes, two releases
>>> nodes, roots = local_roots(b)
>>> dict(zip(nodes.tolist(), roots.tolist()))
{0: 0, 1: 0, 2: 2, 5: 0}
>>> merged = merge_roots((nodes, roots), (np.array([2, 7]), np.array([2, 2])))
>>> dict(zip(*(a.tolist() for a in merged)))
{0: 0, 1: 0, 2: 2, 5: 0, 7: 2}
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["component_labels", "local_roots", "merge_roots"]


def _roots(nodes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest node of each node's component in the graph of edges ``a - b``
    (``nodes`` sorted and unique; ``a``, ``b`` positions in ``nodes``)."""
    n = len(nodes)
    if n == 0:
        return nodes
    graph = sp.csr_array((np.ones(len(a)), (a, b)), shape=(n, n))
    _, lab = connected_components(graph, directed=False)
    smallest = np.full(lab.max() + 1, np.iinfo(np.int64).max)
    np.minimum.at(smallest, lab, nodes)
    return smallest[lab]


def local_roots(buckets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, roots)`` of the buckets of some classes (one row per class, one column
    per release, -1 where the class is not in the release): every bucket they touch and
    the smallest bucket of its piece."""
    buckets = np.asarray(buckets, dtype=np.int64)
    if buckets.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first = buckets[np.arange(len(buckets)), np.argmax(buckets >= 0, axis=1)]
    a = np.repeat(first, buckets.shape[1])
    b = buckets.ravel()
    keep = b >= 0
    a, b = a[keep], b[keep]
    nodes, at = np.unique(np.concatenate([a, b]), return_inverse=True)
    return nodes, _roots(nodes, at[: len(a)], at[len(a) :])


def merge_roots(left, right) -> tuple[np.ndarray, np.ndarray]:
    """Two lists of ``(nodes, roots)`` joined: the pieces that share a bucket merge."""
    a = np.concatenate([left[0], right[0]])
    b = np.concatenate([left[1], right[1]])
    nodes, at = np.unique(np.concatenate([a, b]), return_inverse=True)
    return nodes, _roots(nodes, at[: len(a)], at[len(a) :])


def _partition_roots(part, R: int):
    return local_roots(part[[f"b{r}" for r in range(R)]].to_numpy(dtype=np.int64))


def _dense(pair, n_buckets: int) -> np.ndarray:
    """The label of every bucket (its own number for a bucket no class touches)."""
    labels = np.arange(n_buckets, dtype=np.int64)
    labels[pair[0]] = pair[1]
    return labels


def component_labels(client, classes, R: int, n_buckets: int):
    """A Dask Delayed, computed and kept on the cluster: the component label (smallest
    bucket) of every bucket, from the partitions of ``classes`` (columns ``b<r>``)."""
    import dask

    level = [dask.delayed(_partition_roots)(p, R) for p in classes.to_delayed()]
    while len(level) > 1:
        nxt = [
            dask.delayed(merge_roots)(a, b) for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    labels = dask.delayed(_dense)(level[0], n_buckets)
    return labels.persist() if client is None else client.persist(labels)
