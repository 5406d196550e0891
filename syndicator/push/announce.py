"""Telling the planet's WebSub hubs that its feeds changed: the planet as a WebSub publisher.

With ``hub`` set in sites.yaml, feed.xml names each hub (``<link rel="hub">``
beside its ``rel="self"``) and so does feed.json (``hubs``, beside its
``feed_url``); see site/render.py and site/jsonfeed.py. After a build has published the site (or
found it current and rendered nothing), :func:`announce` tells each hub of
the feeds it has not been told of yet. A long-running driver calls the
same function after each of its own renders.

Rules:

* The request is the publish ping of PubSubHubbub 0.4, which the W3C WebSub
  recommendation (section 6) leaves to each hub: a form-encoded POST with
  ``hub.mode=publish`` and each topic URL twice, as ``hub.url`` (the 0.4
  name) and as ``hub.topic`` (the name flask-websub's hub and others read).
  One request per hub and build names every topic due for that hub,
  feed.xml's first: a hub that reads one topic only gets the Atom feed.
* A topic is a published file's absolute URL: the planet's ``link`` (with
  a ``/`` added when it lacks one, as render.py's ``base``) joined with
  ``feed.xml`` or ``feed.json``; these are the ``rel="self"`` and
  ``feed_url`` the files carry.
* What each hub was last told of is kept in the store's ``meta`` table
  (:data:`ANNOUNCED_KEY`): {hub URL: {topic URL: SHA-256 of the file as it
  was published when the hub took the ping}}. A topic is due for a hub when
  the file now published hashes otherwise, so a build that rendered nothing,
  or rendered byte-identical feeds, sends nothing. A hub that answers 2xx
  is recorded as told; one that fails (no connection, a timeout, any other
  status, a redirect included: a hub's endpoint is configured, not
  discovered) keeps its old digests, so its topics stay due and every later
  build tries again, changed or not, until it takes them. A hub removed from
  sites.yaml is forgotten; one added is told of both feeds.
* Only a published site is announced: the files hashed are those in the
  output folder, read after the swap, under the build's output lock.
* Each request waits ``config.timeout`` seconds to connect and between bytes,
  sends ``config.user_agent`` and no credentials (no ``.netrc``); proxies and
  the CA bundle come from the environment, as for fetches (:mod:`fetch.outbound`).
* A hub's trouble never stops a build: it is one warning naming the hub and
  the reason. Only the store's own trouble raises (StoreError).
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from syndicator.configtypes import Config
from syndicator.push.websub import notify_publish
from syndicator.site.output import target_of
from syndicator.state.store import Store

if TYPE_CHECKING:
    from syndicator.fetch.outbound import Session

__all__ = ["ANNOUNCED_KEY", "FEEDS", "Ping", "announce", "topics"]

#: Where the store keeps what each hub was last told of: JSON {hub URL: {topic URL: SHA-256 hex}}.
ANNOUNCED_KEY = "websub.announced"
#: The published files a hub is told of, in the order a ping names them.
FEEDS = ("feed.xml", "feed.json")
log = logging.getLogger("syndicator")


@dataclass(frozen=True)
class Ping:
    """One publish request sent to one hub.

    Attributes:
        hub: the hub's URL, as sites.yaml gives it.
        topics: the topic URLs the request named, feed.xml's first.
        problem: why the hub did not take it (``answered HTTP 500``, ``timed
            out after 15 s``, ``connection failed: ...``), or None when it
            answered 2xx.
    """

    hub: str
    topics: tuple[str, ...]
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True when the hub took the ping (answered 2xx): its topics are no longer due (bool)."""
        return self.problem is None


def topics(config: Config) -> dict[str, str]:
    """{file name: topic URL} of :data:`FEEDS`: the planet's ``link`` (``/`` added when it lacks one)
    joined with each file name, as the feeds carry them in ``rel="self"`` and ``feed_url`` (dict of str)."""
    base = config.link if config.link.endswith("/") else config.link + "/"
    return {name: base + name for name in FEEDS}


def announce(config: Config, store: Store, session: Session | None = None) -> list[Ping]:
    """Tell each hub of ``config.hubs`` of the published feeds it was not told of yet (module docstring).

    Call it after the site was published into ``config.output`` (or found
    current), holding the output's lock so the files are not replaced meanwhile.

    Args:
        config: the planet's settings: ``hubs``, ``link``, ``output``,
            ``timeout`` (seconds) and ``user_agent``.
        store: the state; what each hub was told of is read from and kept in
            its meta table under :data:`ANNOUNCED_KEY`.
        session: a session to send with (:func:`fetch.outbound.new_session`; a
            long-running driver keeps one); None makes one for this call.
            Nothing is imported from requests unless a hub is due a ping.
    Returns:
        one :class:`Ping` per hub that was sent a request, in ``config.hubs``
        order; [] when no topic was due (or no hub is set).
    Raises:
        StoreError: what the hubs were told of cannot be kept.
    """
    if not config.hubs:
        return []
    published = _published(config)
    stored = store.value(config.state_key(ANNOUNCED_KEY))
    told = _read(stored)
    kept: dict[str, dict[str, str]] = {}
    due: dict[str, tuple[str, ...]] = {}
    for hub in config.hubs:
        kept[hub] = {topic: digest for topic, digest in told.get(hub, {}).items() if topic in published}
        due[hub] = tuple(topic for topic, digest in published.items() if kept[hub].get(topic) != digest)
    pings: list[Ping] = []
    if any(due.values()):
        pings = _send(config, due, session)
    for ping in pings:
        if ping.ok:
            kept[ping.hub].update({topic: published[topic] for topic in ping.topics})
            log.info("told hub %s that %s changed", ping.hub, " and ".join(ping.topics))
        else:
            log.warning(
                "hub %s was not told that %s changed: %s; the next build tries again",
                ping.hub,
                " and ".join(ping.topics),
                ping.problem,
            )
    text = json.dumps(kept, sort_keys=True)
    if text != stored:
        store.keep(config.state_key(ANNOUNCED_KEY), text)
    return pings


def _published(config: Config) -> dict[str, str]:
    """{topic URL: SHA-256 hex of the file as published} of :data:`FEEDS` in the output folder, in that
    order; a file that is not there (a theme may leave one out) is left out."""
    folder = target_of(Path(config.output))
    found: dict[str, str] = {}
    for name, topic in topics(config).items():
        try:
            with open(folder / name, "rb") as file:
                found[topic] = hashlib.file_digest(file, "sha256").hexdigest()
        except FileNotFoundError:
            continue
    return found


def _read(text: str | None) -> dict[str, dict[str, str]]:
    """What each hub was told of, from :data:`ANNOUNCED_KEY`'s JSON; {} for None or text that is not that."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(hub): {str(topic): str(digest) for topic, digest in told.items()}
        for hub, told in data.items()
        if isinstance(told, dict)
    }


def _send(config: Config, due: dict[str, tuple[str, ...]], session: Session | None) -> list[Ping]:
    """One ping to each hub with topics due, in turn (at most 4 hubs: no threads)."""
    from syndicator.fetch.outbound import new_session  # noqa: PLC0415 - here: a build with nothing to announce never loads requests

    own = session is None
    if session is None:
        session = new_session(config.user_agent)  # the outbound policy: no .netrc credentials, the CA bundle
    session.headers["User-Agent"] = config.user_agent
    try:
        pings = []
        for hub, names in due.items():
            if names:
                answer = notify_publish(session, hub, names, config.timeout)
                pings.append(Ping(hub, names, None if answer.accepted else answer.message))
        return pings
    finally:
        if own:
            session.close()
