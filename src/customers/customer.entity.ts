import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { CompanyType } from './company-type.js';

@Entity({ name: 'customers' })
export class Customer {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'company_name', type: 'varchar', length: 255, nullable: true })
  companyName: string | null;

  @Column({ name: 'company_type', type: 'varchar', length: 32, nullable: true })
  companyType: CompanyType | null;
}
