-- Hand-written: an update that cleared a campaign's audience condition stored the JSON object
-- {"set": null} instead of NULL, which every usage check then read as a condition tree.
UPDATE "campaigns" SET "audience_condition" = NULL WHERE "audience_condition" = '{"set": null}'::jsonb;
