"""book/_ext/answer_block: an answer the reader opens only after trying (chapters 03-05, the order of reading).

Role: a Sphinx extension with one directive, ``answer``, that puts its content (prose, an
excerpt, a table) in a collapsed HTML ``<details>`` block whose summary line is the
directive's argument. It is the shape of perfbook's quick quizzes: the question or the
exercise stands in the text, its answer sits right behind it, closed until the reader asks
for it::

    ```{answer} The library's version (open after the exercise)
    ```{literalinclude} /code/evloop/ready_queue.cpp
    ...
    ```
    ```

Debian bookworm packages neither sphinx-design's ``dropdown`` nor sphinx-togglebutton, and
furo (2022.12) has no collapsible admonition, so the block is the browser's own
``<details>``: no script, and it opens from the keyboard. The content is parsed as the
page's own markup, so the book's checks (the figure roles, the region markers, the width
check, which measures every block open) read it as they read the rest of the note. A
builder other than HTML shows the summary line and the content as they stand, open.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

__version__ = "1"


class answer_node(nodes.General, nodes.Element):
    """A collapsed block: its first child is the summary paragraph, the rest the content."""


def visit_answer_html(self, node):
    self.body.append(self.starttag(node, "details", CLASS="answer"))


def depart_answer_html(self, node):
    self.body.append("</details>\n")


def visit_summary_html(self, node):
    self.body.append(self.starttag(node, "summary", CLASS="answer-summary"))


def depart_summary_html(self, node):
    self.body.append("</summary>\n")


class answer_summary(nodes.TextElement, nodes.General):
    """The line a reader clicks to open the block."""


def visit_plain(self, node):
    pass


def depart_plain(self, node):
    pass


def visit_summary_plain(self, node):
    pass


def depart_summary_plain(self, node):
    pass


class AnswerDirective(SphinxDirective):
    has_content = True
    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        if not self.content:
            raise self.error("answer: a collapsed block needs content")
        node = answer_node()
        self.set_source_info(node)
        summary = answer_summary()
        text_nodes, messages = self.state.inline_text(self.arguments[0], self.lineno)
        summary += text_nodes
        node += summary
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node, *messages]


def setup(app):
    app.add_node(answer_node, html=(visit_answer_html, depart_answer_html),
                 latex=(visit_plain, depart_plain), text=(visit_plain, depart_plain),
                 man=(visit_plain, depart_plain), texinfo=(visit_plain, depart_plain))
    app.add_node(answer_summary, html=(visit_summary_html, depart_summary_html),
                 latex=(visit_summary_plain, depart_summary_plain), text=(visit_summary_plain, depart_summary_plain),
                 man=(visit_summary_plain, depart_summary_plain), texinfo=(visit_summary_plain, depart_summary_plain))
    app.add_directive("answer", AnswerDirective)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
