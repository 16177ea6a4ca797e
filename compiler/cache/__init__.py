"""krc's one cache store: where it keeps what it can rebuild, and how an entry is verified before it is believed.

Every cache kind is a `CacheKind` declared beside the code that fills it (its name, its record version); they all
share the location (`cache_dir`), one key recipe (`cache_key`), one entry format and one atomic writer (store.py);
an entry several processes would work out at once is worked out by one of them (one_writer.py).
The kinds, and what each keeps:

  compiled, summaries      one environment's compiled result, and its small summary    compile_cache.py
  summary-index            every environment's summary, one entry per project          summary_index.py
  policy, lint, reviews    results derived from a compiled environment                 compile_cache.py, pipeline/
  destinations             each environment's Argo CD destination, one index per project  destination_cache.py
  outputs                  which result each rendered/<env>/ folder holds               output_stamps.py
  tree-digests             golden/ file digests by file signature                       tree_digests.py
  input-digests            the environment files' digests by signature, one per project  input_digests.py
  fingerprint              krc's own code's digest by its files' signatures             cache/digests.py
  review-memo              unchanged environments' reviews, one file per project        pipeline/review_memo.py
  crds                     the facts of a chart archive's CRDs                         charts/package.py
  chart-texts              a chart archive's listing and the texts krc reads of it     charts/chart_texts.py
  helm-template            the engine's Helm answers                                   charts/helm_template.py
  autoscaler               Ray's autoscaling-config generator's answers                 autoscaler/run.py
  kuberay                  KubeRay's builds' answers, by object                        native/kuberay.py
"""
from .location import cache_dir
from .store import CacheKind, cache_key, canonical_text, forget_trusted_folders

__all__ = ["CacheKind", "cache_dir", "cache_key", "canonical_text", "forget_trusted_folders"]
