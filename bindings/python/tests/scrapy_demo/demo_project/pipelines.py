class DropBody:
    """The benchmark's baseline pipeline: only removes the body, as DITTO_DROP_BODY does."""

    def process_item(self, item, spider=None):
        item.pop("body", None)
        return item
