"""What arrives or leaves without a poll: WebSub (subscriptions, signed notifications, the
callback server), announcing the planet to hubs, webhook deliveries.

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
