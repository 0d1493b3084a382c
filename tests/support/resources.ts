// The REST shapes of SPEC.md that several test files read, typed once.

/** A contact as the dashboard endpoints answer it (SPEC.md "Contact"). */
export type Contact = {
  id: string;
  email: string;
  subscribed: boolean;
  snoozedUntil: string | null;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  _meta?: { isNew: boolean; isUpdate: boolean };
};

/** The error envelope of SPEC.md "Errors". */
export type ErrorBody = {
  success: false;
  error: {
    code: string;
    message: string;
    statusCode: number;
    requestId: string;
    errors?: Array<{ field: string; code: string; message: string; received?: unknown }>;
    details?: Record<string, unknown>;
  };
  timestamp: string;
};
