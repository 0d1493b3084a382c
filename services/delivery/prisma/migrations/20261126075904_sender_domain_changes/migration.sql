-- Every delivery replica LISTENs on herald_sender_domains and forgets a sending domain that is deleted or stops
-- being verified (sending-domains/sender-domain-listener.ts). NOTIFY is sent at commit, whatever made the change.
CREATE FUNCTION notify_sender_domain_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR (OLD.verified AND NOT NEW.verified) THEN
    PERFORM pg_notify('herald_sender_domains', TG_TABLE_SCHEMA || ' ' || OLD.project_id::text || ' ' || OLD.domain);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER domains_notify_sender_gone
  AFTER DELETE OR UPDATE OF verified ON domains
  FOR EACH ROW EXECUTE FUNCTION notify_sender_domain_gone();
