"""A run's answer.md rendered for its report page: Markdown and tables as HTML, raw HTML as text, plots by position."""

from dagsmith.ui.report import render_report


def test_the_report_renders_markdown_but_no_markup_from_goals_or_steps():
    markdown = ("# predict <b>churn</b>\n\nA <script>alert(1)</script> paragraph.\n\n"
                "![roc](steps/06/artifacts/roc.png)\n![elsewhere](../../etc/passwd)\n\n"
                "| metric | value |\n|---|---|\n| roc_auc | 0.84 |\n")
    html = render_report(markdown, {"steps/06/artifacts/roc.png": "/dagsmith/runs/7/plots/0"}.get)
    assert "<h1>predict &lt;b&gt;churn&lt;/b&gt;</h1>" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert '<img src="/dagsmith/runs/7/plots/0" alt="roc" />' in html
    assert "passwd" not in html and html.count("<img") == 1  # an image the run did not make is dropped
    assert "<td>roc_auc</td>" in html
