import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/index.js';
import { PaginationModule } from '../pagination/pagination.module.js';
import { Customer } from './customer.entity.js';
import { CustomerCompanyController } from './customer-company.controller.js';
import { CustomerOfPath } from './customer-id.decorator.js';
import { CustomerSeeder } from './customer-seeder.service.js';
import { CustomersController } from './customers.controller.js';
import { customersList } from './customers.list.js';
import { CustomersRepository } from './customers.repository.js';
import { CustomersService } from './customers.service.js';

@Module({
  imports: [
    PaginationModule,
    DatabaseModule.forFeature({ entities: [Customer], lists: [customersList] }),
  ],
  controllers: [CustomersController, CustomerCompanyController],
  providers: [CustomersRepository, CustomersService, CustomerSeeder, CustomerOfPath],
  exports: [CustomersService],
})
export class CustomersModule {}
