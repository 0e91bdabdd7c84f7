"""Embed the rows of the data table in 2 dimensions with t-SNE (for plotting clusters), on standardized
numeric features; the features are replaced by component_1 and component_2.

t-SNE cannot embed new rows, so it runs before any split; perplexity is capped below a third of the rows,
and tables above max_rows are refused (it is slow and memory-hungry). Needs no missing values.
"""

from sklearn.manifold import TSNE

from dagsmith_kit import ServiceError, run_service
from dagsmith_kit.transforms import mark_unreplayable
from dagsmith_kit.unsupervised import data_matrix, with_components


def embed(inp, out, params):
    perplexity = float(params.get("perplexity", 30.0))
    max_rows = int(params.get("max_rows", 5000))
    random_state = int(params.get("random_state", 42))
    if perplexity <= 0:
        raise ServiceError(f"perplexity must be positive, got {perplexity}")
    data, columns, values = data_matrix(inp, standardize=True, max_rows=max_rows, min_rows=4)
    used = min(perplexity, (len(values) - 1) / 3)
    tsne = TSNE(n_components=2, perplexity=used, init="pca", random_state=random_state)
    out.write_table("data", with_components(data, columns, tsne.fit_transform(values)))
    mark_unreplayable(out, "t-SNE places only the rows it was fitted on; it cannot embed new rows")
    out.write_metrics({"perplexity": used, "kl_divergence": float(tsne.kl_divergence_)})
    out.append_report(f"## t-SNE embedding\n\n{len(columns)} numeric features -> 2 components "
                      f"(perplexity {used:.3g}, KL divergence {tsne.kl_divergence_:.3f})")


if __name__ == "__main__":
    run_service(embed)
