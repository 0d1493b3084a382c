-- Hand-written: email.unsubscribe, recorded when a recipient unsubscribes through the link of an email.
ALTER TABLE "email_activity" DROP CONSTRAINT "email_activity_type";
ALTER TABLE "email_activity" ADD CONSTRAINT "email_activity_type" CHECK (
    "type" IN ('email.sent', 'email.delivery', 'email.open', 'email.click', 'email.bounce', 'email.complaint',
               'email.failed', 'email.deferred', 'email.received', 'email.unsubscribe')
);
