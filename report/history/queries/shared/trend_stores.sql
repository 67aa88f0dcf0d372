-- The stores each workspace and zone's runs read: rows (workspace_id, tz,
-- store_id), '' for runs recorded before the store was. The trend gives
-- those the one store of their workspace and zone, when there is one.
SELECT DISTINCT workspace_id, tz, store_id FROM runs
