-- 009: the store identity each workspace's store went by, per the id of
-- how STORE_DSN spells it (legacy_id). A run that cannot ask the store
-- what it is (the store down for the night) names its report and its
-- recorded run after the identity the same STORE_DSN last had, so that
-- the trend keeps the night in the store's series instead of a series of
-- its own. Written by every run that identified its store.
CREATE TABLE store_ids (
    workspace_id text NOT NULL,
    legacy_id    text NOT NULL,
    store_id     text NOT NULL,
    PRIMARY KEY (workspace_id, legacy_id)
);
