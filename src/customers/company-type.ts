export const COMPANY_TYPES = [
  'undefined',
  'private',
  'sole-trader',
  'limited-company',
  'llp',
  'partnership',
  'plc',
  'charity',
  'local-authority',
] as const;

export type CompanyType = (typeof COMPANY_TYPES)[number];
