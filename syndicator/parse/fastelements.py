"""The fast reader's handlers for the elements it reads, each as feedparser's handler for it.

Text elements (titles, descriptions, summaries, content, in or out of
line), RSS source, the media elements (media:group, media:content,
media:thumbnail, media:title, media:description), links, guids and ids,
authors and itunes:owner, categories (RSS and Atom ``category``, ``dc:subject``,
``media:category``, nested ``itunes:category``): :class:`Elements` stores each into the feed or
entry mapping with feedparser's keys and values, or raises
:class:`fastnames.Unsure`. Which handler an element goes to is decided by
:mod:`fastreader`'s walk; the state they share is :class:`fastscope.Scope`.
"""

from __future__ import annotations

import re
from typing import Any

from syndicator.parse import feedreader
from syndicator.parse.categories import ITUNES_SCHEME
from syndicator.parse.fastnames import Unsure, name_of, text_of
from syndicator.parse.fastscope import Scope
from syndicator.parse.fastxhtml import xhtml
from syndicator.parse.feedreader import AuthorState, repaired

_LINK_FIX = re.compile(r"&([A-Za-z0-9_]+);")
_XHTML_TYPE = "application/xhtml+xml"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


class Elements(Scope):
    """The handlers of the elements read, on the walk's state (:class:`fastscope.Scope`)."""

    def _detail(
        self, element: Any, attributes: dict[str, str], element_name: str, default_type: str
    ) -> tuple[str, dict[str, Any]]:
        """(value, detail) of a content-like element, or unsure for XHTML, base64 or markup inside."""
        if "mode" in attributes:
            raise Unsure
        content_type = feedreader.map_content_type(attributes.get("type", default_type))
        if content_type == _XHTML_TYPE and self.atom:
            output = xhtml(element, self.budget)
            if output is None:
                raise Unsure
            output = repaired(output)
            return output, {"type": content_type, "language": self._language(), "base": self.baseuri, "value": output}
        if content_type not in ("text/plain", "text/html"):
            raise Unsure  # other types are base64
        output = text_of(element).strip()
        if not self.atom and content_type == "text/plain" and feedreader.looks_like_html(output):
            content_type = "text/html"
        output = repaired(output)
        return output, {"type": content_type, "language": self._language(), "base": self.baseuri, "value": output}

    def _content(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        element_name: str,
        default_type: str,
        in_entry: bool = True,
        depths: dict[str, int] | None = None,
    ) -> None:
        """A title, description, summary or itunes:summary (feedparser's ``push_content``/``pop``)."""
        output, detail = self._detail(element, attributes, element_name, default_type)
        if element_name == "title" and -1 < self.title_depth <= self.depth:
            pass  # a title was already kept at this depth
        elif in_entry:
            key = "summary" if element_name == "description" else element_name
            self._store(context, key, output, depths)
            context[f"{key}_detail"] = detail
        else:
            key = "subtitle" if element_name == "description" else element_name
            context[key] = output
            context[f"{key}_detail"] = detail
        if element_name == "title" and output:
            self.title_depth = self.depth

    def _body(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        default_type: str,
        depths: dict[str, int],
    ) -> None:
        """Content: appended to ``content``, and the summary when there is none yet."""
        self.has_content = True
        output, detail = self._detail(element, attributes, "content", default_type)
        context.setdefault("content", []).append(detail)
        context.setdefault("summary", output)

    def _out_of_line(self, element: Any, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """Atom ``<content src>`` (RFC 4287 section 4.1.3.2): empty, so its detail's value is "" and,
        for a text or HTML type, so is the summary when there is none yet (feedparser's ``_end_content``).
        One that holds something, or has a ``mode``, is left to feedparser."""
        if len(element) or (element.text or "").strip() or "mode" in attributes:
            raise Unsure
        self.has_content = True
        content_type = feedreader.map_content_type(attributes.get("type", "text/plain"))
        context.setdefault("content", []).append(
            {
                "type": content_type,
                "language": self._language(),
                "base": self.baseuri,
                "src": attributes["src"],
                "value": "",
            }
        )
        if content_type == "text/plain" or content_type in _HTML_TYPES:
            context.setdefault("summary", "")

    def _description(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An entry's description (or media:description): its summary, or its content when a summary came first."""
        if "summary" in context and not self.has_content:
            self._body(element, attributes, context, "text/plain", depths)
        else:
            self._content(element, attributes, context, "description", "text/html", depths=depths)

    def _summary(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An entry's summary: its summary, or its content when a summary (a description) came first."""
        if "summary" in context and not self.has_content:
            self._body(element, attributes, context, "text/plain", depths)
        else:
            self._content(element, attributes, context, "summary", "text/plain", depths=depths)

    def _atom_content(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An entry's content element: out of line when it has a ``src``, else its content."""
        if "src" in attributes:
            self._out_of_line(element, attributes, context)
        else:
            self._body(element, attributes, context, "text/plain", depths)

    def _enclosure(self, element: Any, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """An RSS enclosure: a link with ``rel="enclosure"``, read from its attributes alone."""
        self._check_empty(element)
        attributes = feedreader.enforce_href(attributes)
        attributes["rel"] = "enclosure"
        context.setdefault("links", []).append(attributes)

    def _itunes_image(self, element: Any, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """itunes:image (or itunes:link): the entry's ``image``, from its ``href``, else its ``url``."""
        self._check_empty(element)
        href = attributes.get("href") or attributes.get("url")
        if href:
            context["image"] = {"href": href}

    def _media_title(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        depths: dict[str, int] | None,
        in_entry: bool = True,
    ) -> None:
        """media:title: a title like any other, except that it leaves the title depth as it found it."""
        title_depth = self.title_depth
        self._content(element, attributes, context, "title", "text/plain", in_entry=in_entry, depths=depths)
        self.title_depth = title_depth

    def _source(
        self, element: Any, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """An RSS source (a title and a url): Atom's, which holds elements, is left to feedparser."""
        self.title_depth = -1
        source = {"href": attributes["url"]} if "url" in attributes else {}
        value = self._value(text_of(element), "source")
        self._store(context, "source", value, depths)
        if value:
            source["title"] = value
        context["source"] = source

    def _media(
        self, element: Any, name: str, attributes: dict[str, str], context: dict[str, Any], depths: dict[str, int]
    ) -> None:
        """media:group, media:content and media:thumbnail, and the media elements inside them."""
        if name == "media_title":
            self._media_title(element, attributes, context, depths)
            return
        if name == "media_description":
            self._description(element, attributes, context, depths)
            return
        if name == "media_content":
            context.setdefault("media_content", []).append(attributes)
        elif name == "media_thumbnail":
            thumbnails = context.setdefault("media_thumbnail", [])
            thumbnails.append(attributes)
            url = self._value(text_of(element), "url")
            self._store(context, "url", url, depths)
            if url.strip() and "url" not in attributes:
                attributes["url"] = url
            return
        for child in element:
            child_name = name_of(child)
            child_attributes = self._enter(child)
            if child_name in ("media_content", "media_thumbnail", "media_group", "media_title", "media_description"):
                self._media(child, child_name, child_attributes, context, depths)
            elif child_name == "media_category":
                self._category(child, child_name, child_attributes, context)
            else:
                self._check_skipped(child)
            self._leave()

    def _category(self, element: Any, name: str, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """A category of an entry or the feed (:data:`fastnames.CATEGORIES`), into ``tags`` as feedparser's
        ``_start_category`` and ``_end_category`` file it (:func:`feedreader.add_tag`): the attributes
        first (term, scheme or domain, label; itunes:category's ``text``), then the text, which is the
        term of an attribute-made tag without one, else a tag of its own."""
        if name == "itunes_category":
            self._itunes_category(element, attributes, context)
            return
        if name == "media_category":
            attributes.setdefault("scheme", "http://search.yahoo.com/mrss/category_schema")
        scheme = attributes.get("scheme", attributes.get("domain"))
        feedreader.add_tag(context, attributes.get("term"), scheme, attributes.get("label"))
        self._category_text(element, context)

    def _category_text(self, element: Any, context: dict[str, Any]) -> None:
        """The text of a category element (feedparser's ``_end_category``): the term of the last tag
        when that has none, else a tag of its own."""
        value = self._value(text_of(element), "category")
        if not value:
            return
        tags = context["tags"]
        if tags and not tags[-1]["term"]:
            tags[-1]["term"] = value
        else:
            feedreader.add_tag(context, value, None, None)

    def _itunes_category(self, element: Any, attributes: dict[str, str], context: dict[str, Any]) -> None:
        """itunes:category: a tag of its ``text``, then its text (a subcategory some feeds write so) or
        the itunes:category elements inside it (Apple's subcategories); any other content is left to feedparser."""
        feedreader.add_tag(context, attributes.get("text"), ITUNES_SCHEME, None)
        if not len(element):
            self._category_text(element, context)
            return
        if (element.text or "").strip() or any((child.tail or "").strip() for child in element):
            raise Unsure
        for child in element:
            if name_of(child) != "itunes_category":
                raise Unsure
            child_attributes = self._enter(child)
            self._itunes_category(child, child_attributes, context)
            self._leave()

    def _link(self, element: Any, attributes: dict[str, str], context: dict[str, Any], in_entry: bool) -> None:
        """An RSS link (text) or an Atom link (attributes), as feedparser's ``_start_link``."""
        attributes.setdefault("rel", "alternate")
        attributes.setdefault("type", "application/atom+xml" if attributes["rel"] == "self" else "text/html")
        attributes = feedreader.enforce_href(attributes)
        if "href" in attributes:
            self._check_empty(element)
            attributes["href"] = feedreader.urljoin(self.baseuri or "", attributes["href"])
            context.setdefault("links", []).append(attributes)
            if (
                attributes.get("rel") == "alternate"
                and feedreader.map_content_type(attributes.get("type")) in _HTML_TYPES
            ):
                context["link"] = attributes["href"]
            return
        context.setdefault("links", []).append(attributes)
        output = self._value(text_of(element), "link")
        if in_entry:
            output = _LINK_FIX.sub(r"&\g<1>", output.replace("&amp;", "&"))
        else:
            output = _LINK_FIX.sub(r"&\g<1>", output)
        context["link"] = output
        if output:
            context["links"][-1]["href"] = output

    def _guid(
        self,
        element: Any,
        attributes: dict[str, str],
        context: dict[str, Any],
        in_entry: bool,
        depths: dict[str, int] | None = None,
    ) -> None:
        """An RSS guid or Atom id; a permalink guid stands in for a missing link."""
        self.guidislink = attributes.get("ispermalink", "true") == "true"
        output = self._value(text_of(element), "id")
        self._store(context, "id", output, depths if in_entry else None)
        context.setdefault("guidislink", self.guidislink and "link" not in context)
        if self.guidislink:
            context.setdefault("link", output)

    def _author(self, element: Any, state: AuthorState, depths: dict[str, int] | None = None) -> None:
        """An author element: RSS text (``Name <email>``) or Atom name, email and uri children."""
        context = state.context
        context.setdefault("authors", []).append(feedreader.FeedParserDict())
        pieces = [element.text or ""]
        for child in element:
            name = name_of(child)
            self._enter(child)
            if name in ("name", "itunes_name"):
                state.save_author("name", text_of(child).strip())
            elif name in ("email", "itunes_email"):
                state.save_author("email", text_of(child).strip())
            elif name in ("uri", "url", "homepage"):
                href = self._value(text_of(child), "href")
                self._store(context, "href", href, depths)
                state.save_author("href", href)
            else:
                self._check_skipped(child)
            self._leave()
            pieces.append(child.tail or "")
        self._store(context, "author", self._value("".join(pieces), "author"), depths)
        state.sync_author_detail()

    def _owner(self, element: Any, state: AuthorState) -> None:
        """itunes:owner: its name and email are the publisher's (and, by feedparser's quirk, an author's)."""
        for child in element:
            name = name_of(child)
            self._enter(child)
            if name in ("itunes_name", "name"):
                state.save_author("name", text_of(child).strip(), "publisher")
            elif name in ("itunes_email", "email"):
                state.save_author("email", text_of(child).strip(), "publisher")
            else:
                self._check_skipped(child)
            self._leave()
        state.sync_author_detail("publisher")
